//go:build !unix

package effects

import "time"

func processCPU() time.Duration { return 0 }
