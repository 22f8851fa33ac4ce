//go:build cuda11080

package main

func newer() {}
