package intent

import "testing"

// corpusZH is a set of Chinese prompts written as people ask a coding
// agent: questions ending in 吗/呢, polite openers (请, 帮我, 能不能),
// names in backticks or 「」, identifiers and paths in Latin letters
// inside Chinese sentences. Each names the intent and the target a
// careful reader would extract.
var corpusZH = []corpusCase{
	// recognize
	{"这是什么错误：ECONNRESET？", "recognize", "ECONNRESET", TargetConcept},
	{"帮我识别一下这个日志格式", "recognize", "日志格式", TargetConcept},
	{"main.pb.go 是什么类型的文件？", "recognize", "main.pb.go", TargetFile},
	{"scripts/gen.tmpl 是用哪种语言写的？", "recognize", "scripts/gen.tmpl", TargetFile},
	{"能认出这段堆栈是哪个库的吗？", "recognize", "堆栈", TargetConcept},

	// locate
	{"登录函数在哪里?", "locate", "登录", TargetSymbol},
	{"配置加载器在哪里？", "locate", "配置加载器", TargetConcept},
	{"请帮我找一下 parseConfig 函数", "locate", "parseConfig", TargetSymbol},
	{"`HandleIntentDetection` 定义在哪个文件？", "locate", "HandleIntentDetection", TargetSymbol},
	{"审计日志是在哪写入的？", "locate", "审计日志", TargetConcept},
	{"帮我查找重试逻辑", "locate", "重试逻辑", TargetConcept},
	{"限流器的代码在什么地方？", "locate", "限流器的代码", TargetConcept},
	{"Dockerfile 在哪儿？", "locate", "Dockerfile", TargetFile},

	// understand
	{"审批队列是怎么工作的？", "understand", "审批队列", TargetConcept},
	{"解释一下调度器", "understand", "调度器", TargetConcept},
	{"parseConfig() 是做什么的？", "understand", "parseConfig", TargetSymbol},
	{"能不能讲讲重试策略？", "understand", "重试策略", TargetConcept},
	{"internal/jsonscan 有什么用？", "understand", "internal/jsonscan", TargetDirectory},
	{"介绍一下描述符哈希", "understand", "描述符哈希", TargetConcept},
	{"max_depth 这个配置是什么意思？", "understand", "max_depth", TargetSymbol},

	// retrieve
	{"我们之前决定的重试次数是多少？", "retrieve", "重试次数", TargetConcept},
	{"还记得我们约定的限流值吗？", "retrieve", "限流值", TargetConcept},
	{"上次你说缓存怎么处理来着？", "retrieve", "缓存", TargetConcept},
	{"之前讨论过的命名方案是什么？", "retrieve", "命名方案", TargetConcept},
	{"你记得测试数据库的名字吗", "retrieve", "测试数据库的名字", TargetConcept},

	// explore
	{"给我看看项目结构", "explore", "项目", TargetWorkspace},
	{"internal/ 里有哪些文件？", "explore", "internal/", TargetDirectory},
	{"列出 cmd/ahp 下的文件", "explore", "cmd/ahp", TargetDirectory},
	{"这个仓库的整体架构是怎样的？", "explore", "仓库", TargetWorkspace},
	{"store 包是怎么组织的？", "explore", "store", TargetPackage},
	{"带我熟悉一下这个代码库", "explore", "代码库", TargetWorkspace},

	// reason
	{"为什么部署任务失败了?", "reason", "部署任务", TargetConcept},
	{"为什么握手被拒绝？", "reason", "握手", TargetConcept},
	{"解码器崩溃的原因是什么？", "reason", "解码器", TargetConcept},
	{"TestReconnect 为什么超时？", "reason", "TestReconnect", TargetSymbol},
	{"缓存为啥是空的", "reason", "缓存", TargetConcept},
	{"服务器内存上涨是怎么回事？", "reason", "服务器内存上涨", TargetConcept},

	// validate
	{"验证一下迁移是否成功", "validate", "迁移", TargetConcept},
	{"检查 config.yaml 是否有效", "validate", "config.yaml", TargetFile},
	{"请确保测试都能通过", "validate", "测试", TargetConcept},
	{"重试逻辑对不对？", "validate", "重试逻辑", TargetConcept},
	{"帮我调试一下 TestDial", "validate", "TestDial", TargetSymbol},
	{"确认一下 go.mod 有没有问题", "validate", "go.mod", TargetFile},

	// compare
	{"v1 和 v2 有什么区别？", "compare", "v1和v2", TargetConcept},
	{"比较一下 sqlite 存储和 postgres 存储", "compare", "sqlite存储和postgres存储", TargetConcept},
	{"gRPC 和 WebSocket 哪个更好？", "compare", "gRPC和WebSocket", TargetConcept},
	{"Client.Dial 与 transport.Dial 有什么不同？", "compare", "Client.Dial和transport.Dial", TargetSymbol},
	{"对比 unix 传输和 stdio 传输", "compare", "unix传输和stdio传输", TargetConcept},

	// track
	{"部署的状态怎么样了？", "track", "部署", TargetConcept},
	{"迁移的进度如何？", "track", "迁移", TargetConcept},
	{"main.go 的修改记录", "track", "main.go", TargetFile},
	{"policy 包最近改了什么？", "track", "policy", TargetPackage},
	{"重构做到哪一步了？", "track", "重构", TargetConcept},
	{"发布完成了吗？", "track", "发布", TargetConcept},

	// Written after the table was tuned on the rows above, as a held-out
	// check; the first run's figures are in docs/intent.md.
	{"会话过期的逻辑在哪个文件里？", "locate", "会话过期的逻辑", TargetConcept},
	{"帮我搜索一下 json.Unmarshal 的调用", "locate", "json.Unmarshal", TargetSymbol},
	{"批处理是如何分发的？", "understand", "批处理", TargetConcept},
	{"我们上次定的 PKI 方案是什么？", "retrieve", "PKI方案", TargetConcept},
	{"docs/ 目录下有哪些文件", "explore", "docs/", TargetDirectory},
	{"为什么一个事件写了两条审计记录？", "reason", "事件", TargetConcept},
	{"检查一下 approvals 表有没有索引", "validate", "approvals表", TargetConcept},
	{"unix 传输比 stdio 传输快吗？", "compare", "unix传输和stdio传输", TargetConcept},
	{"websocket 重连的工作进展如何？", "track", "websocket重连的工作", TargetConcept},
	{"这个报错属于什么类型？", "recognize", "报错", TargetConcept},
}

// Floors for the Chinese corpus: at or below today's figures (issue 18 asks for ≥ 85 % intent); raise them when the table improves.
const (
	minIntentAccuracyZH = 0.95
	minTargetAccuracyZH = 0.85
)

// TestCorpusAccuracyZH measures the Chinese table on corpusZH, without a
// language hint (the script picks the table), and reports the figures.
func TestCorpusAccuracyZH(t *testing.T) {
	scoreCorpus(t, "Chinese: ", corpusZH, "", minIntentAccuracyZH, minTargetAccuracyZH, func(c corpusCase, r Result) {
		if r.Language != "zh" {
			t.Errorf("%q: read with table %q", c.prompt, r.Language)
		}
		if r.Trigger != "" && r.Target.Name == r.Trigger {
			t.Errorf("%q: target is the trigger %q", c.prompt, r.Trigger)
		}
	})
}
