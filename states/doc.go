// Package states is the Salt state compiler and the state modules.
//
// Not implemented yet: see README.md for what works today.
package states
