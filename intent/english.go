package intent

import "strings"

// The English phrase table. Trigger phrases start from the ones the AHP
// README lists for each intent and add the usual ways of asking the same
// thing. Contractions are expanded before matching, so "where's" matches
// "where is".
func registerEnglish() {
	p := map[string]trigger{}
	add := func(intent string, weight float64, phrases ...string) {
		for _, s := range phrases {
			p[s] = trigger{intent: intent, weight: weight}
		}
	}
	infix := func(weight float64, phrases ...string) {
		for _, s := range phrases {
			p[s] = trigger{intent: "compare", weight: weight, infix: true}
		}
	}

	add("recognize", 3, "what kind of", "what sort of", "which kind of", "what type of", "identify",
		"recognize", "recognise", "what language is", "what format is", "classify")
	add("locate", 3, "where is", "where are", "where was", "where were", "where does", "where do",
		"where can i find", "where do i find", "where in the code", "where in the codebase",
		"which file", "what file", "in which file", "which package", "what package", "which function",
		"which method", "which type", "which class", "which module", "which files define", "search for", "look for", "looking for", "searching for",
		"locate", "find where", "track down", "point me to", "find the definition of", "go to definition")
	add("locate", 2, "find", "search", "look up", "grep for", "grep")
	add("locate", 1, "where")

	add("understand", 2, "how does", "how do", "explain", "what does", "describe", "tell me about",
		"help me understand", "understand", "walk me through", "clarify", "purpose of", "meaning of",
		"what is the purpose of", "what is the point of", "what is the role of", "how it works",
		"what happens when")
	add("understand", 1, "what is", "what are", "how is", "how are", "implemented")

	add("retrieve", 3, "remember", "last time", "recall", "we discussed", "we talked about",
		"we decided", "did we decide", "did we agree", "we agreed", "you said", "you mentioned",
		"you told me", "last session", "the other day", "previous conversation", "previous session",
		"do you remember")
	add("retrieve", 2, "earlier", "previous", "previously", "before that")

	add("explore", 3, "project structure", "folder structure", "directory structure",
		"code structure", "repo structure", "repository structure", "what files", "which files",
		"list files", "list the files", "list all files", "list all the files", "overview",
		"layout", "directory tree", "file tree", "tour", "what is in", "what is inside",
		"organized", "organised", "structured", "laid out", "show me around", "explore", "browse",
		"what packages", "which packages", "list the packages", "what modules", "high-level view",
		"big picture")
	add("explore", 2, "structure", "list")

	add("reason", 3, "why did", "why does", "why is", "why are", "why was", "why were", "why do",
		"why would", "why has", "why have", "how come", "root cause", "what caused",
		"what causes", "what is causing", "cause of", "reason for", "reason why", "what made")
	add("reason", 2, "cause", "caused", "causing")
	add("reason", 1, "why")

	add("validate", 3, "verify", "check if", "check that", "check whether", "make sure", "ensure",
		"is it correct", "is this correct", "is that correct", "is it right", "validate",
		"double check", "double-check", "confirm that", "test whether", "sanity check", "debug",
		"does it work", "is it valid")
	add("validate", 2, "confirm", "correct", "correctly", "valid", "still work", "still works")
	add("validate", 1, "check")

	add("compare", 3, "difference between", "differences between", "diff between", "compare",
		"comparison of", "comparison between", "which is better", "which one is better",
		"pros and cons of", "how does it compare")
	infix(3, "vs", "versus", "compared to", "compared with", "differ from", "differs from",
		"different from", "as opposed to")
	infix(2, "better than", "faster than", "slower than")

	add("track", 3, "status of", "progress", "progressing", "history of", "git log",
		"what changed", "what has changed", "recent changes", "changelog", "how far along",
		"where are we on", "where are we with", "done yet", "finished yet", "keep track of",
		"track", "any updates on", "latest on", "timeline of", "commit history")
	add("track", 2, "status", "history", "recently changed", "last changed")

	add("", 0, "can you", "could you", "would you", "will you", "can u", "please", "pls", "kindly",
		"i want to", "i would like to", "i need to", "i need you to", "help me", "let us",
		"hey", "hi", "hello", "quick question", "show me", "tell me", "give me", "find out",
		"for me", "in the code", "in the codebase", "in this repo", "in the repo", "i wonder",
		"do you know", "any idea", "just", "real quick", "thanks", "thank you", "i am trying to",
		"is there a way to", "actually")

	register(&lexicon{
		code:    "en",
		aliases: []string{"english", "eng"},
		phrases: p,
		contractions: map[string][]string{
			"where's": {"where", "is"}, "what's": {"what", "is"}, "who's": {"who", "is"},
			"how's": {"how", "is"}, "it's": {"it", "is"}, "that's": {"that", "is"},
			"there's": {"there", "is"}, "here's": {"here", "is"}, "let's": {"let", "us"},
			"why's": {"why", "is"}, "when's": {"when", "is"}, "which's": {"which", "is"},
			"can't": {"can", "not"}, "won't": {"will", "not"}, "shan't": {"shall", "not"},
			"i'm": {"i", "am"}, "i'd": {"i", "would"}, "i've": {"i", "have"}, "i'll": {"i", "will"},
		},
		abbreviations: words("vs. e.g. i.e. etc. approx. resp. cf."),
		lead: words(`the a an this that these those our my your their its his her some any all each
			every how what why where when which who whom whose whether if is are was were be been being
			am do does did has have had can could would will should shall may might must it me us i we
			you they them he she to of on in into inside within under for about regarding concerning at
			from with by not no there here so then also really exactly currently now out up again
			defines define declares declare contains contain implements implement happens happened happen
			whole entire current following one two three four five several many few both`),
		about:      words("about regarding concerning re"),
		relational: words(`format encoding call calls name names usages usage uses references callers caller definition definitions declaration implementation implementations source purpose role meaning contents content value values rest list type kind tests test docs documentation examples example owner owners update updates report state version versions`),
		relPreps:   words("of for on to behind"),
		cut: words(`is are was were be been being am does do did has have had can could would will
			should shall may might must and or but because since so before after when while until
			unless if whether we you i they he she it works worked working mean means happen
			happens fail fails failing break breaks broke return returns panic panics panicked crash
			crashes hang hangs run runs ran pass passes get gets got use uses call calls handle handles
			live lives come comes differ differs behave behaves look looks take takes need needs keep
			keeps stop stops start starts throw throws show shows print prints change changes exist
			exists go goes went connect connects relate relates interact interacts affect affects load
			loads written done broken gone kept built thrown shown hidden taken made found sent held
			doing going not anymore`),
		relative: words("that which who where whose"),
		subjects: words("i we you they"),
		aux:      words("do does did would could can will should"),
		verbs: words(`accept accepts reject rejects refuse refuses allow allows deny denies block blocks gate
			gates parse parses read reads write writes send sends receive receives emit emits retry
			retries drop drops ignore ignores skip skips decode decodes encode encodes compile compiles
			leak leaks wait waits sleep sleeps need needs want wants try tries create creates delete
			deletes remove removes add adds open opens close closes produce produces generate generates
			invoke invokes spawn spawns exit exits hold holds expect expects require requires treat
			treats count counts answer answers respond responds reply replies resolve resolves choose
			chooses pick picks select selects split splits merge merges sort sorts filter filters wrap
			wraps keep keeps lose loses miss misses see sees know knows trigger triggers raise raises
			catch catches stall stalls freeze freezes flush flushes persist persists save saves fetch
			fetches pull pulls push pushes decide decides pass passes hit hits reach reaches grow grows
			compute computes validate validates check checks print prints call calls return returns
			handle handles use uses record records expire expires work evict evicts
			store stores`),
		preps: words("in inside within under across from at into on with for to by"),
		trail: words(`please again now here there exactly actually today yesterday recently lately yet
			already currently right correctly properly me us anyway then too also first originally
			flaky slow slower faster wrong empty missing nil null stuck different valid invalid
			true false down unused needed necessary possible still required enabled disabled ok okay
			at all`),
		pastSuffix: "ed",
		pastExcept: "eed",
		heads: map[string]string{
			"file": TargetFile, "files": TargetFile,
			"directory": TargetDirectory, "directories": TargetDirectory, "dir": TargetDirectory,
			"folder": TargetDirectory, "folders": TargetDirectory,
			"package": TargetPackage, "packages": TargetPackage, "module": TargetPackage, "modules": TargetPackage,
			"function": TargetSymbol, "functions": TargetSymbol, "func": TargetSymbol, "method": TargetSymbol,
			"methods": TargetSymbol, "class": TargetSymbol, "struct": TargetSymbol, "type": TargetSymbol,
			"interface": TargetSymbol, "variable": TargetSymbol, "var": TargetSymbol, "const": TargetSymbol,
			"constant": TargetSymbol, "field": TargetSymbol, "enum": TargetSymbol, "macro": TargetSymbol,
			"trait": TargetSymbol, "symbol": TargetSymbol, "identifier": TargetSymbol,
			"code": TargetConcept, "logic": TargetConcept, "part": TargetConcept, "place": TargetConcept,
		},
		workspace: set{"project": true, "repo": true, "repository": true, "codebase": true, "code base": true,
			"workspace": true, "monorepo": true, "whole project": true, "entire project": true},
		joiners:  words("and or with to vs versus against"),
		priority: strings.Fields("compare reason validate retrieve track recognize explore locate understand"),
	})
}
