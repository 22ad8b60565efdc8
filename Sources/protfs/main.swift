print("protfs")
