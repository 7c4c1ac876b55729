envdata: {{ saltenv }} dev
