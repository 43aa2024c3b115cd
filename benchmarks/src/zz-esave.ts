import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { median, seedChat } from './bench-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'perf34-es-'));
const store = new SqliteContextStore(join(dir, 's.db'));
await seedChat(store, 'e', 'u', 1000);
const engine = new ContextEngine({ store, chatId: 'e', userId: 'u', renderer: new XmlRenderer() });
engine.set(role('x'));
await engine.resolve();
const t: number[] = [];
for (let run = 0; run < Number(process.env.N ?? 30000); run++) {
  engine.set(user(`question ${run}`), assistantText(`answer ${run}, a few words long`));
  const s = performance.now();
  await engine.save();
  t.push(performance.now() - s);
}
console.log('engine.save', median(t.slice(1000)).toFixed(4));
