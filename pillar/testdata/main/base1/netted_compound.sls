netted_compound: true
