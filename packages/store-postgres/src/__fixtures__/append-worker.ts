// A separate process appending turns to one shared chat: argv = url schema chatId workerId turns.
// Each turn re-reads the head and retries on HeadConflictError, as ContextEngine.save() does.
// Prints one JSON line: { committed, conflicts }.
import { HeadConflictError } from '@ctxgraph/fragments-core';
import { PostgresContextStore } from '../postgres-context-store';

const [url, schema, chatId, workerId, turnsText] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const turns = Number(turnsText);
const store = new PostgresContextStore({ connectionString: url, schema, connection: { max: 1 } });
let conflicts = 0;
try {
  for (let turn = 0; turn < turns; turn += 1) {
    const userId = `${workerId}-t${turn}-user`;
    const assistantId = `${workerId}-t${turn}-assistant`;
    for (;;) {
      const head = await store.getHead({ chatId, branch: 'main' });
      try {
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: head.headMessageId,
          messages: [
            {
              id: userId,
              message: {
                id: userId,
                role: 'user',
                parts: [{ type: 'text', text: `question ${turn}` }],
              },
            },
            {
              id: assistantId,
              message: {
                id: assistantId,
                role: 'assistant',
                parts: [{ type: 'text', text: `answer ${turn}` }],
              },
            },
          ],
        });
        break;
      } catch (error) {
        if (!HeadConflictError.isInstance(error)) throw error;
        conflicts += 1;
      }
    }
  }
  process.stdout.write(`${JSON.stringify({ committed: turns, conflicts })}\n`);
} finally {
  await store.close();
}
