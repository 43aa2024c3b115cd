import type { ValidationIssue } from '../../errors/errors';
import { describeValue } from '../../rules/paths';
import type { PrepareMessagesOptions } from './store-input';

/**
 * Adds the problem of commit entry `index`'s `newVersion` to `issues`, if it has one: not a
 * boolean, asked of a store without message versions, or with a node id other than the message
 * id (the store allocates the node id; `id` names the message).
 */
export function newVersionIssue(
  index: number,
  newVersion: unknown,
  id: unknown,
  messageId: unknown,
  options: PrepareMessagesOptions | undefined,
  issues: ValidationIssue[],
): void {
  const path = `messages[${index}].newVersion`;
  if (typeof newVersion !== 'boolean')
    issues.push({ path, message: `expected a boolean, received ${describeValue(newVersion)}` });
  else if (newVersion && options?.messageVersions !== true)
    issues.push({
      path,
      message:
        'this store does not keep message versions (capabilities.messageVersions is not declared)',
    });
  else if (newVersion && id !== messageId)
    issues.push({
      path: `messages[${index}].id`,
      message: `must equal message.id ${JSON.stringify(messageId)} for a new version (the store allocates the node id)`,
    });
}
