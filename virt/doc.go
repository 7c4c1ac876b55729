// Package virt manages libvirt guests the way Salt Virt does.
//
// Not implemented yet: see README.md for what works today.
package virt
