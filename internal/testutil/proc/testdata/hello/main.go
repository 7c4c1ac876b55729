// Command hello prints a greeting, serves TCP on 127.0.0.1 and waits for
// SIGTERM (unless told to ignore it): the daemon proc's tests start.
package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Catch SIGTERM before saying we listen: a test that stops us right
	// after the log line must find the handler in place.
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM)
	l, err := net.Listen("tcp", "127.0.0.1:"+os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer l.Close()
	fmt.Fprintln(os.Stderr, "to stderr")
	fmt.Println("listening on", l.Addr())
	for s := range c {
		if len(os.Args) > 2 && os.Args[2] == "stubborn" {
			fmt.Println("ignoring", s)
			continue
		}
		fmt.Println("stopping on", s)
		return
	}
}
