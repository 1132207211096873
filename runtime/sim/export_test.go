package sim

// Planted faults, for the external tests of Options.Check (check_test.go).
const (
	FaultOverlapKernels   = faultOverlapKernels
	FaultKernelBeforeData = faultKernelBeforeData
	FaultOverCapacity     = faultOverCapacity
	FaultNoInvalidate     = faultNoInvalidate
)

// PlantFault plants f until the returned function is called.
func PlantFault(f fault) (restore func()) {
	plantedFault = f
	return func() { plantedFault = faultNone }
}
