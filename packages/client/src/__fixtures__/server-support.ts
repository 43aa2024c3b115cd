// What the server half of the contract supports yet. The node ids and versions in
// `GET …/messages` and the `after` of a turn's body are added to `createChatHandler` beside this
// package; until they are, the tests that need them are skipped (and say so), and run as soon as
// the handler has them.
import { createTestChatServer } from './chat-server';

/** Whether the handler answers `nodeIds` / `versions`, and places a turn `after` a node. */
export async function serverSupport(): Promise<{ nodeIds: boolean; after: boolean }> {
  const server = createTestChatServer();
  const turn = (body: object) =>
    server.fetch('/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const message = (id: string, text: string) => ({
    id,
    role: 'user',
    parts: [{ type: 'text', text }],
  });
  const first = await turn({
    id: 'probe',
    message: message('m1', 'probe'),
    trigger: 'submit-message',
  });
  await first.text();
  const read = (await (await server.fetch('/api/chat/probe/messages')).json()) as {
    nodeIds?: unknown;
  };
  // A turn after a node the chat does not have: refused by a handler that reads `after`.
  const placed = await turn({
    id: 'probe',
    message: message('m2', 'probe again'),
    trigger: 'submit-message',
    after: 'no-such-node',
  });
  await placed.text();
  return { nodeIds: typeof read.nodeIds === 'object' && read.nodeIds !== null, after: !placed.ok };
}
