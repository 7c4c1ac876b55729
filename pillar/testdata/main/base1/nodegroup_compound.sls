nodegroup_compound: true
