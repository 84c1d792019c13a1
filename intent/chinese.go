package intent

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The Chinese phrase table (simplified characters, with the common
// traditional forms of the triggers). Chinese is written without spaces,
// so the table comes with its own word splitter (splitHan): a run of Han
// characters is cut at the table's words, longest first, and the
// characters between them make one word each run ("登录函数在哪里" reads
// as 登录 · 函数 · 在哪里).
func registerChinese() {
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

	add("recognize", 3, "识别", "辨认", "认出", "是什么类型", "是哪种", "属于什么", "什么格式", "什么语言写的",
		"哪种语言", "是什么东西", "这是什么", "這是什麼", "是什么错误", "什么错误")
	add("locate", 3, "在哪里", "在哪儿", "在哪", "在哪裡", "哪里", "哪儿", "哪個", "哪个文件", "哪个包", "哪个函数",
		"哪个模块", "哪个类", "哪个方法", "位于", "查找", "搜索", "定位", "找一下", "找出", "找到", "找找", "寻找",
		"在什么地方", "什么位置", "定义在", "实现在")
	add("locate", 2, "找")
	add("understand", 3, "怎么工作", "如何工作", "怎样工作", "工作原理", "原理", "怎么实现的", "如何实现的", "是怎么",
		"是如何", "解释", "讲解", "讲讲", "说明一下", "介绍", "什么意思", "做什么", "干什么", "有什么用", "作用",
		"理解", "看懂", "怎么用", "如何使用", "怎么运行", "如何运行", "流程", "解釋")
	add("understand", 1, "怎么", "如何", "是什么")
	add("retrieve", 3, "记得", "还记得", "記得", "上次", "之前说", "之前说过", "我们讨论过", "讨论过", "我们决定",
		"决定的", "约定", "说过", "提到过", "回忆", "之前提到", "上回", "刚才说", "之前定的", "之前的决定")
	add("retrieve", 2, "之前", "以前", "先前", "刚才", "当时")
	add("explore", 3, "项目结构", "目录结构", "代码结构", "文件结构", "仓库结构", "有哪些文件", "哪些文件",
		"有什么文件", "列出", "概览", "概况", "总览", "目录树", "文件树", "浏览", "组织结构", "整体架构",
		"架构", "有哪些包", "哪些包", "哪些模块", "都有什么", "里面有什么", "包含哪些", "怎么组织", "如何组织",
		"结构", "大致", "逛逛", "熟悉一下", "是怎么组织", "怎么组织的", "如何组织的")
	add("reason", 3, "是怎么回事", "为什么", "為什麼", "为何", "原因", "怎么回事", "导致", "根本原因", "根因", "引起", "造成",
		"为啥", "咋回事")
	add("validate", 3, "验证", "驗證", "检查", "確認", "确认", "确保", "核实", "校验", "调试", "对不对", "是否正确",
		"正确吗", "对吗", "有没有问题", "能不能用", "测试一下", "排查", "有没有bug", "是否有效", "有效吗", "是否还能")
	add("compare", 3, "区别", "區別", "差别", "差异", "不同", "比较", "對比", "对比", "相比", "哪个更好", "哪个好",
		"优缺点", "孰优孰劣", "有何不同", "有什么不同")
	infix(2, "比")
	add("track", 3, "进度", "進度", "进展", "状态", "狀態", "历史", "提交记录", "修改记录", "变更记录", "最近改了",
		"改了什么", "改动", "变更", "完成了吗", "做完了吗", "做到哪", "到哪一步", "到哪了", "多久", "更新情况",
		"最新情况", "最近的修改", "提交历史")

	add("", 0, "请", "请问", "請", "帮我", "幫我", "帮忙", "能不能", "能否", "可以", "可不可以", "你能", "麻烦",
		"一下", "给我", "告诉我", "看看", "看一下", "我想知道", "我想", "谢谢", "你好", "嗨", "劳驾", "我需要",
		"在代码里", "在项目里", "在仓库里", "代码里", "项目里", "项目中", "代码中", "怎么样", "怎样", "是怎样的",
		"来着", "带我")

	register(&lexicon{
		code:    "zh",
		aliases: []string{"chinese", "中文", "汉语", "zho", "chi", "cmn"},
		phrases: p,
		split:   splitHan,
		andSep:  "和",
		// "登录函数在哪里": the target usually comes before the trigger.
		targetBefore: true,
		lead: words(`的 这个 那个 这 那 这些 那些 它 是 在 把 将 对 当前 现在 所有 整个 一个 个 段 条 份 种 这段
			这条 哪个 什么 有 里 中 目前 最近`),
		subjects:   words("我 我们 你 你们 他 她 咱们"),
		about:      words("关于 有关 对于"),
		relational: words("用法 定义 作用 实现 调用 用途"),
		cut: words(`是 会 能 要 被 了 吗 呢 和 与 跟 或 或者 还是 但 但是 因为 所以 如果 失败 出错 报错 崩溃 超时
			挂了 挂掉 卡住 变慢 没有 不 不能 无法 还 都 又 就 的时候 时 之后 以后 吧 啊 怎么 如何 是什么 是多少
			是怎样 是哪 写 说 做 改`),
		verbs: words("说 定 写 做 改 讲 提"),
		trail: words(`了 吗 呢 吧 啊 呀 嘛 一下 下 的 现在 目前 还 吗 么 啦 哦 正确 对 好`),
		heads: map[string]string{
			"文件": TargetFile, "档案": TargetFile,
			"目录": TargetDirectory, "文件夹": TargetDirectory,
			"包": TargetPackage, "模块": TargetPackage, "库": TargetPackage,
			"函数": TargetSymbol, "方法": TargetSymbol, "类": TargetSymbol, "结构体": TargetSymbol,
			"接口": TargetSymbol, "变量": TargetSymbol, "常量": TargetSymbol, "字段": TargetSymbol,
			"类型": TargetSymbol, "枚举": TargetSymbol,
			"代码": TargetConcept, "逻辑": TargetConcept, "部分": TargetConcept,
		},
		workspace: set{"项目": true, "仓库": true, "代码库": true, "工程": true, "整个项目": true, "这个项目": true,
			"项目的": true, "代码仓库": true},
		joiners:  words("和 与 跟 同 以及 还是 或 或者 对 vs versus"),
		priority: strings.Fields("compare reason validate retrieve track recognize explore locate understand"),
	})
}

// isHan reports whether r is a Han (CJK ideograph) character.
func isHan(r rune) bool { return unicode.Is(unicode.Han, r) }

// cjkPunct are the full-width marks that end a clause.
const cjkPunct = "，。？！：；、…,.?!:;"

// splitHan cuts a run of Han characters into the words of lx: at each
// position the longest word of the table is taken; characters matching no
// word are gathered into one word until the next table word starts.
func splitHan(run string, lx *lexicon) []string {
	rs := []rune(run)
	var out []string
	pending := 0 // start of the characters not yet in a word
	for i := 0; i < len(rs); {
		n := 0
		for l := min(lx.maxWordRunes, len(rs)-i); l >= 1; l-- {
			if lx.dict[string(rs[i:i+l])] {
				n = l
				break
			}
		}
		if n == 0 {
			i++
			continue
		}
		if pending < i {
			out = append(out, string(rs[pending:i]))
		}
		out = append(out, string(rs[i:i+n]))
		i += n
		pending = i
	}
	if pending < len(rs) {
		out = append(out, string(rs[pending:]))
	}
	return out
}

// appendChunk adds the tokens of one whitespace-separated chunk of a
// prompt in a language with a word splitter: runs of Han characters are
// split into words, full-width punctuation ends a clause, and everything
// else (identifiers, paths, numbers) is read as a word of its own.
func appendChunk(toks []token, chunk string, lx *lexicon) []token {
	for chunk != "" {
		r, size := utf8.DecodeRuneInString(chunk)
		switch {
		case isHan(r):
			j := size
			for j < len(chunk) {
				r2, s2 := utf8.DecodeRuneInString(chunk[j:])
				if !isHan(r2) {
					break
				}
				j += s2
			}
			for _, w := range lx.split(chunk[:j], lx) {
				toks = append(toks, token{text: w, norm: w})
			}
			chunk = chunk[j:]
		case strings.ContainsRune(cjkPunct, r) && r > utf8.RuneSelf:
			toks = markEnd(toks)
			chunk = chunk[size:]
		default:
			j := size
			for j < len(chunk) {
				r2, s2 := utf8.DecodeRuneInString(chunk[j:])
				if isHan(r2) || (r2 > utf8.RuneSelf && strings.ContainsRune(cjkPunct, r2)) {
					break
				}
				j += s2
			}
			toks = appendWord(toks, chunk[:j], lx)
			chunk = chunk[j:]
		}
	}
	return toks
}

// scriptLanguage returns the code of the table for the script the prompt
// is mostly written in: "zh" when it has at least as many Han characters
// as words in other scripts (an identifier counts as one word), else "".
func scriptLanguage(s string) string {
	han, other := 0, 0
	inWord := false
	for _, r := range s {
		switch {
		case isHan(r):
			han++
			inWord = false
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			if !inWord {
				other++
			}
			inWord = true
		default:
			inWord = false
		}
	}
	if han > 0 && han >= other {
		return "zh"
	}
	return ""
}
