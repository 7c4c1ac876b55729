// Package interop holds end-to-end tests that run gsalt's commands beside
// real Salt 3006 processes (skipped unless GSALT_SALT_SRC names a Salt
// source tree). It has no library code.
package interop
