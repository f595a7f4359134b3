module github.com/agenticdriver/agenticdriver/conformance/drivers/go

go 1.24

require github.com/agenticdriver/agenticdriver/clients/go v0.0.0

replace github.com/agenticdriver/agenticdriver/clients/go => ../../../clients/go
