import { env } from 'cloudflare:test';
import {
  ChatNotFoundError,
  type CommitInput,
  type CommitResult,
  HeadConflictError,
  type OpenChatInput,
  type OpenChatResult,
  StoreError,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import type { OutcomeChatObject } from '../__fixtures__/test-worker';
import {
  reviveError,
  type StoreCallOutcome,
  settleStoreCall,
  storeCallOutcome,
} from './store-call-outcome';

const chats = (env as unknown as { OUTCOME_CHATS: DurableObjectNamespace<OutcomeChatObject> })
  .OUTCOME_CHATS;

/** The object's stub, with the methods' declared types (the RPC stub's mapped types are deep). */
interface OutcomeChat {
  openChat(input: OpenChatInput): Promise<StoreCallOutcome<OpenChatResult>>;
  commit(input: CommitInput): Promise<StoreCallOutcome<CommitResult>>;
}

function chatObject(chatId: string): OutcomeChat {
  return chats.get(chats.idFromName(chatId)) as unknown as OutcomeChat;
}

const message = (id: string) => ({
  id,
  message: { id, role: 'user' as const, parts: [{ type: 'text' as const, text: id }] },
});

describe('store calls over Workers RPC, with their ctxgraph errors', () => {
  it('passes a value through, and brings a HeadConflictError back with its class and fields', async () => {
    const chatId = `chat-${crypto.randomUUID()}`;
    const object = chatObject(chatId);
    const { branch } = settleStoreCall(await object.openChat({ chatId, userId: 'ada' }));
    const first = settleStoreCall(
      await object.commit({
        chatId,
        branch: branch.name,
        expectedHeadId: null,
        messages: [message('m1')],
      }),
    );
    expect(first.headMessageId).toBe('m1');

    const stale = await object.commit({
      chatId,
      branch: branch.name,
      expectedHeadId: null,
      messages: [message('m2')],
    });
    const error = (() => {
      try {
        settleStoreCall(stale);
        return null;
      } catch (caught) {
        return caught;
      }
    })();
    expect(HeadConflictError.isInstance(error)).toBe(true);
    expect(error).toBeInstanceOf(HeadConflictError);
    expect(error).toMatchObject({
      name: 'HeadConflictError',
      chatId,
      branch: 'main',
      expectedHeadId: null,
      currentHeadId: 'm1',
    });
    expect((error as Error).message).toBe(
      new HeadConflictError({
        chatId,
        branch: 'main',
        expectedHeadId: null,
        currentHeadId: 'm1',
      }).message,
    );
  });

  it("keeps a ValidationError's issues and a ChatNotFoundError's chat id", async () => {
    const chatId = `chat-${crypto.randomUUID()}`;
    const object = chatObject(chatId);
    const missing = await object.commit({
      chatId,
      branch: 'main',
      expectedHeadId: null,
      messages: [message('m1')],
    });
    expect(() => settleStoreCall(missing)).toThrow(ChatNotFoundError);
    expect(missing).toMatchObject({ ok: false, error: { fields: { chatId } } });

    const invalid = await object.openChat({ chatId: '', userId: 'ada' });
    expect(() => settleStoreCall(invalid)).toThrow(ValidationError);
    const issues = (() => {
      try {
        return settleStoreCall(invalid);
      } catch (caught) {
        return (caught as ValidationError).issues;
      }
    })();
    expect(issues).toEqual([expect.objectContaining({ path: 'chatId' })]);
  });

  it('throws an error that is not a ctxgraph error as it is', async () => {
    const bug = new TypeError('not a ctxgraph error');
    await expect(
      storeCallOutcome(() => {
        throw bug;
      }),
    ).rejects.toBe(bug);
  });

  it('brings an unknown error name back as a StoreError that names it', () => {
    const error = reviveError({ name: 'FutureError', message: 'from a newer object', fields: {} });
    expect(StoreError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(/FutureError.*from a newer object/);
  });
});
