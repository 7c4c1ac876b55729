late: last
