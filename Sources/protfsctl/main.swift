print("protfsctl")
