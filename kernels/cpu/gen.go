package cpu

// The libraries under lib/ and zlibs.go are built from csrc/ by build.sh.
//go:generate sh build.sh
