// Regenerates groundtruth.json from the aioc reference loader.
//
// The expectations in groundtruth.json were produced by aioc 0.2.8 itself
// (github.com/axiastudio/aioc, tag v0.2.8, built with `tsc -p
// tsconfig.build.json`, js-yaml 4.1.1 as pinned by its package-lock.json):
// loadAgentHarnessDescriptorFromFile, then buildAgentHarness with a registry
// that binds every target, then descriptorHash and the canonical JSON it
// hashes (or the message of the error aioc throws).
//
// Usage: node gen.js /path/to/aioc/dist > groundtruth.json   (run in this directory)
const path = require("path");
const fs = require("fs");
const dist = path.resolve(process.argv[2]);
const aioc = require(path.join(dist, "index.js"));
const { toCanonicalJson } = require(path.join(dist, "canonical-json.js"));
const anyTool = { tools: new Proxy({}, { get: () => ({}) }) };

(async () => {
  const out = {};
  for (const f of fs.readdirSync(__dirname).filter((n) => n.endsWith(".yaml") || n.endsWith(".json") && n !== "groundtruth.json").sort()) {
    try {
      const d = await aioc.loadAgentHarnessDescriptorFromFile(path.join(__dirname, f));
      const h = aioc.buildAgentHarness(d, anyTool);
      out[f] = { hash: h.descriptorHash, canonical: toCanonicalJson(d) };
    } catch (e) {
      out[f] = { error: e.message };
    }
  }
  process.stdout.write(JSON.stringify(out, null, 2) + "\n");
})();
