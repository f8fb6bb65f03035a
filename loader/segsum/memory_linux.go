package segsum

import "syscall"

// totalMemory is the machine's memory as sysinfo(2) gives it; 0 when it
// cannot say.
func totalMemory() int64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}
