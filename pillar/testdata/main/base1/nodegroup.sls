nodegroup: true
