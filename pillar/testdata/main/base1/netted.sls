netted: true
