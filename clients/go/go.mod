module github.com/agenticdriver/agenticdriver/clients/go

go 1.24
