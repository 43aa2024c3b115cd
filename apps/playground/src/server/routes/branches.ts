import type { ContextEngine } from '@ctxgraph/engine';
import type { BranchRecord, CheckpointRecord } from '@ctxgraph/fragments-core';
import { Hono } from 'hono';
import { z } from 'zod';
import { buildChatView } from '../chat-view';
import { jsonBody, nameSchema, userOf } from '../read-request';
import type { RouteDependencies } from './route-dependencies';

const schemas = {
  rewind: z.object({ messageId: nameSchema }).strict(),
  checkpoint: z
    .object({ name: nameSchema, messageId: nameSchema.optional(), replace: z.boolean().optional() })
    .strict(),
  restore: z.object({ name: nameSchema }).strict(),
  switchBranch: z.object({ branch: nameSchema }).strict(),
  renameBranch: z.object({ from: nameSchema, to: nameSchema }).strict(),
  empty: z.object({}).strict(),
};

/**
 * The graph operations on `/chats/:chatId/…`: `rewind` (a new branch at a message), `checkpoints`
 * (name the head, or `messageId`), `restore` (a new branch at a checkpoint), `btw` (fork at the head and stay),
 * `switch` (another branch), `rename-branch` (the engine's `renameBranch`). Each answers
 * `{ result, view }`.
 */
export function branchRoutes(dependencies: RouteDependencies) {
  const { store, chats, defaultUserId } = dependencies;

  /** Runs the operation on the chat's engine and answers its result with the chat after it. */
  async function operate<T extends BranchRecord | CheckpointRecord>(
    chatId: string,
    userId: string,
    operation: (engine: ContextEngine) => Promise<T>,
  ) {
    return chats.use(chatId, userId, async (engine) => {
      const result = await operation(engine);
      return { result, view: await buildChatView(engine, store) };
    });
  }

  return new Hono()
    .post('/chats/:chatId/rewind', jsonBody(schemas.rewind), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      const answer = await operate(context.req.param('chatId'), userId, (engine) =>
        engine.rewind(body.messageId),
      );
      return context.json(answer, 200);
    })
    .post('/chats/:chatId/checkpoints', jsonBody(schemas.checkpoint), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      const replace = body.replace ?? false;
      const answer = await operate(context.req.param('chatId'), userId, (engine) =>
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
    .post('/chats/:chatId/restore', jsonBody(schemas.restore), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      const answer = await operate(context.req.param('chatId'), userId, (engine) =>
        engine.restore(body.name),
      );
      return context.json(answer, 200);
    })
    .post('/chats/:chatId/btw', jsonBody(schemas.empty), async (context) => {
      const userId = userOf(context, defaultUserId);
      const answer = await operate(context.req.param('chatId'), userId, (engine) => engine.btw());
      return context.json(answer, 200);
    })
    .post('/chats/:chatId/switch', jsonBody(schemas.switchBranch), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      const answer = await operate(context.req.param('chatId'), userId, (engine) =>
        engine.switchBranch(body.branch),
      );
      return context.json(answer, 200);
    })
    .post('/chats/:chatId/rename-branch', jsonBody(schemas.renameBranch), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      const answer = await operate(context.req.param('chatId'), userId, (engine) =>
        engine.renameBranch(body.from, body.to),
      );
      return context.json(answer, 200);
    });
}
