package results

func TwoBWMarkdown() (string, error)       { return "TODO", nil }
