import { BranchExistsError, HeadConflictError, StoreError } from '../../errors/errors';
import type { AppendResult } from '../context-store';
import type { BranchRecord } from '../records';
import type { PreparedAppend } from './commit-input';
import type { ContextStoreDriver } from './context-store-driver';
import type { PreparedForkBranch } from './pointer-input';
import { forkBranchName } from './pointer-input';

// What the kit gives a thin driver that serves `commit` and `createBranch` but not `append` or
// `forkBranch`: both built from the driver's required methods, so every store has every required
// method of the contract. A store that can do better (a row lock, one write transaction) serves
// them itself and the kit uses its own. These defaults live in the kit and nowhere else: the
// engine always calls the store's methods.

/** How often a default retries a conflict before giving up. */
const KIT_DEFAULT_ATTEMPTS = 100;

/** Every runtime the kit targets has a timer; the package's types name no runtime. */
const timers = globalThis as unknown as {
  setTimeout(callback: () => void, milliseconds: number): unknown;
};

/** A short random pause after the first few attempts, so contending writers spread out. */
function backOff(attempt: number): Promise<void> | undefined {
  if (attempt <= 3) return undefined;
  const milliseconds = Math.random() * Math.min(2 ** attempt, 25);
  return new Promise((resolve) => timers.setTimeout(resolve, milliseconds));
}

/**
 * `append` from `getHead` and `commit`: the head is read, the messages committed on it, and on a
 * `HeadConflictError` committed again on the head the conflict names, up to
 * {@link KIT_DEFAULT_ATTEMPTS} times (a short random pause after the third). Each attempt is the
 * driver's own atomic commit, so a refused one writes nothing; giving up is a `StoreError`, with
 * nothing written. Any other refusal (`MessageIdConflictError`, `BranchNotFoundError`) is thrown
 * as the commit threw it.
 */
export async function appendByCommit(
  driver: ContextStoreDriver,
  input: PreparedAppend,
): Promise<AppendResult> {
  const { chatId, branch, messages } = input;
  let expectedHeadId = (await driver.getHead.call(driver, { chatId, branch })).headMessageId;
  let conflict: HeadConflictError | undefined;
  for (let attempt = 1; attempt <= KIT_DEFAULT_ATTEMPTS; attempt += 1) {
    try {
      const result = await driver.commit.call(driver, {
        chatId,
        branch,
        expectedHeadId,
        messages,
        fork: undefined,
      });
      return { ...result, previousHeadId: expectedHeadId };
    } catch (error) {
      if (!HeadConflictError.isInstance(error)) throw error;
      conflict = error;
      expectedHeadId = error.currentHeadId;
      await backOff(attempt);
    }
  }
  throw new StoreError(
    `append(input): ${driver.name} gave up after ${KIT_DEFAULT_ATTEMPTS} attempts because other writers kept moving the head of branch "${branch}" in chat "${chatId}". Nothing was written; try again.`,
    { cause: conflict },
  );
}

/**
 * `forkBranch` from `listBranches` and `createBranch`: the next free name after `from`
 * (`forkBranchName`) is created, and when a concurrent fork took it first (`BranchExistsError`),
 * the next one, up to {@link KIT_DEFAULT_ATTEMPTS} times (a short random pause after the
 * third). Giving up is a `StoreError`, with nothing created. `ChatNotFoundError` and
 * `MessageNotFoundError` come from the driver's own calls.
 */
export async function forkByCreate(
  driver: ContextStoreDriver,
  input: PreparedForkBranch,
): Promise<BranchRecord> {
  const { chatId, from, headMessageId, activate } = input;
  let clash: BranchExistsError | undefined;
  for (let attempt = 1; attempt <= KIT_DEFAULT_ATTEMPTS; attempt += 1) {
    const branches = await driver.listBranches.call(driver, chatId);
    const name = forkBranchName(
      from,
      branches.map((branch) => branch.name),
    );
    try {
      return await driver.createBranch.call(driver, { chatId, name, headMessageId, activate });
    } catch (error) {
      if (!BranchExistsError.isInstance(error)) throw error;
      clash = error;
      await backOff(attempt);
    }
  }
  throw new StoreError(
    `forkBranch(input): ${driver.name} gave up after ${KIT_DEFAULT_ATTEMPTS} attempts because other writers kept taking the next name after "${from}" in chat "${chatId}". Nothing was created; try again.`,
    { cause: clash },
  );
}
