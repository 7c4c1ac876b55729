include: merged_a
badinc: 1
