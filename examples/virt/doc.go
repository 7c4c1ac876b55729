// Package virt holds the tests of examples/virt (the hypervisor formula of
// Salt's "Salt as a Cloud Controller" guide adapted to Debian); it has no
// library code.
package virt
