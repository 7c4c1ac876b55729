package builtin

// BeaconsFunctionsForTest exposes beaconsFunctions to the external tests
// until Register includes the module.
var BeaconsFunctionsForTest = beaconsFunctions
