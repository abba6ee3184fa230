package output

// CSVCell is the export's defusing of a cell a spreadsheet would read as a formula (csvCell),
// for the server's other CSV answers (the fleet's findings): one rule for every CSV we write.
func CSVCell(s string) string { return csvCell(s) }
