// Reads each file named on the command line as one Mermaid chart and prints one JSON line per
// file: what Mermaid itself makes of it (the diagram type, the sections, every task with its
// start and end) or the error it raises. Run from a folder whose node_modules holds mermaid and
// jsdom (TestMermaidChartsParse passes it with node --input-type=module -e).
import fs from 'node:fs';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!DOCTYPE html><body></body>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });

for (const file of process.argv.slice(1)) {
  const text = fs.readFileSync(file, 'utf8');
  const out = { file };
  try {
    await mermaid.parse(text);
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
    out.type = diagram.type;
    // getTasks computes every task's dates: a bad date or duration shows here, not in parse.
    out.tasks = diagram.db.getTasks().map(t => ({
      section: t.section, name: t.task.trim(), milestone: !!t.milestone, crit: !!t.crit, done: !!t.done,
      start: t.startTime instanceof Date ? t.startTime.getTime() : null,
      end: t.endTime instanceof Date ? t.endTime.getTime() : null,
    }));
    out.sections = diagram.db.getSections();
    out.title = diagram.db.getDiagramTitle();
  } catch (e) {
    out.error = String(e && e.message || e);
  }
  console.log(JSON.stringify(out));
}
