//go:build !unix

package effects

import "time"

func shProcessCPU() time.Duration { return 0 }
