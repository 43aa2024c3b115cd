import {
  BranchExistsError,
  type BranchRecord,
  EngineError,
  MessageNotFoundError,
  nextBranchName,
} from '@ctxgraph/fragments-core';
import type { ChatSession } from './chat-session';
import { pause } from './write-messages';

/**
 * Creates a fork of the view's branch at `headMessageId`, and moves the view to it when
 * `activate`. A store that declares `forkBranch` names it atomically; otherwise the next free
 * name is taken and, when a concurrent fork took it, the next one (this loop retries a name, not
 * a head, so it is not the write path's).
 */
export async function forkBranch(
  session: ChatSession,
  headMessageId: string | null,
  activate: boolean,
  from: string = session.view.branch,
): Promise<BranchRecord> {
  const { store, chatId, view } = session;
  const input = { chatId, headMessageId, activate };
  let branch: BranchRecord | undefined;
  if (session.abilities.forkBranch !== undefined) {
    branch = await session.abilities.forkBranch({ ...input, from });
  } else {
    if (headMessageId !== null) {
      const node = await store.getMessage({ chatId, messageId: headMessageId });
      if (node === null) throw new MessageNotFoundError(chatId, headMessageId);
    }
    for (let attempt = 1; attempt <= 100 && branch === undefined; attempt += 1) {
      const names = (await store.listBranches(chatId)).map((entry) => entry.name);
      try {
        branch = await store.createBranch({ ...input, name: nextBranchName(from, names) });
      } catch (error) {
        if (!BranchExistsError.isInstance(error)) throw error;
        if (attempt > 3) await pause(Math.random() * Math.min(2 ** attempt, 100));
      }
    }
    if (branch === undefined) {
      throw new EngineError(
        `Could not find a free branch name after "${from}" in chat "${chatId}": other writers kept taking them.`,
      );
    }
  }
  if (activate) view.moveTo(branch);
  return branch;
}
