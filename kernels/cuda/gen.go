package cuda

// The PTX modules under ptx/ and zptx.go are built from csrc/ by build.sh.
//go:generate sh build.sh
