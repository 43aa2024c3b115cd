import type { ContextEngine } from '@ctxgraph/engine';
import type { BranchRecord, CheckpointRecord } from '@ctxgraph/fragments-core';
import { type Context, Hono } from 'hono';
import { z } from 'zod';
import type { ChatOperation } from '../../shared/wire';
import { buildChatView } from '../chat-view';
import { nameSchema, readBody, userOf } from '../read-request';
import type { RouteDependencies } from './route-dependencies';

const schemas = {
  rewind: z.object({ messageId: nameSchema }).strict(),
  checkpoint: z
    .object({ name: nameSchema, messageId: nameSchema.optional(), replace: z.boolean().optional() })
    .strict(),
  restore: z.object({ name: nameSchema }).strict(),
  switchBranch: z.object({ branch: nameSchema }).strict(),
  empty: z.object({}).strict(),
};

/**
 * The graph operations on `/chats/:chatId/…`: `rewind` (a new branch at a message), `checkpoints`
 * (name the head, or `messageId`), `restore` (a new branch at a checkpoint), `btw` (fork at the head and stay),
 * `switch` (another branch). Each answers `{ result, view }`.
 */
export function branchRoutes(dependencies: RouteDependencies): Hono {
  const { store, engines, defaultUserId } = dependencies;

  /** Runs the operation on the chat's engine and answers its result with the chat after it. */
  async function operate<T extends BranchRecord | CheckpointRecord>(
    context: Context,
    userId: string,
    operation: (engine: ContextEngine) => Promise<T>,
  ): Promise<ChatOperation<T>> {
    return engines.use(context.req.param('chatId') as string, userId, async (engine) => {
      const result = await operation(engine);
      return { result, view: await buildChatView(engine, store) };
    });
  }

  return new Hono()
    .post('/chats/:chatId/rewind', async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = await readBody(context, schemas.rewind);
      return context.json(
        await operate(context, userId, (engine) => engine.rewind(body.messageId)),
      );
    })
    .post('/chats/:chatId/checkpoints', async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = await readBody(context, schemas.checkpoint);
      const replace = body.replace ?? false;
      const answer = await operate(context, userId, (engine) =>
        // The engine names its head; any other message is named through the store, which checks
        // that the message belongs to the chat.
        body.messageId === undefined || body.messageId === engine.headMessageId
          ? engine.checkpoint(body.name, { replace })
          : store.createCheckpoint({
              chatId: engine.chatId,
              name: body.name,
              messageId: body.messageId,
              replace,
            }),
      );
      return context.json(answer, 201);
    })
    .post('/chats/:chatId/restore', async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = await readBody(context, schemas.restore);
      return context.json(await operate(context, userId, (engine) => engine.restore(body.name)));
    })
    .post('/chats/:chatId/btw', async (context) => {
      const userId = userOf(context, defaultUserId);
      await readBody(context, schemas.empty);
      return context.json(await operate(context, userId, (engine) => engine.btw()));
    })
    .post('/chats/:chatId/switch', async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = await readBody(context, schemas.switchBranch);
      return context.json(
        await operate(context, userId, (engine) => engine.switchBranch(body.branch)),
      );
    });
}
