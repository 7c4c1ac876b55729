// Package scraplitest drives devsim fleets with scrapligo (the cisco_iosxe and arista_eos
// platforms over the standard crypto/ssh transport). It holds tests only; they live apart from
// package devsim so that devsim's own tests do not depend on scrapligo's module graph.
package scraplitest
