// Command hello is a second command named hello (proc's build tests: two
// packages of one command name never share a folder).
package main

import "fmt"

func main() { fmt.Println("the other hello") }
