// Command nocu does not use package cu.
package main

func main() {}
