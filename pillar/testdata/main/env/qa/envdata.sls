envdata: {{ saltenv }} qa
