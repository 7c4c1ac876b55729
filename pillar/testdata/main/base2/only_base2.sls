only_base2: here
