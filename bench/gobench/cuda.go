package main

func runCuda(ptx []byte) {
	must("package cuda", errNotYet)
}
