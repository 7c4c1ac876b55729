// Package version holds gsalt's own version and the Salt release whose
// protocol and behaviour it follows.
package version

// Gsalt is gsalt's version.
const Gsalt = "0.1.0-dev"

// Salt is the Salt version gsalt reports wherever Salt reports its own
// (test.version, the saltversion grain), since peers and SLS files branch on
// it.
const Salt = "3006.0"

// SaltInfo is Salt's saltversioninfo grain for Salt.
var SaltInfo = []int64{3006, 0}

// Codename is the Salt codename of Salt.
const Codename = "Sulfur"
