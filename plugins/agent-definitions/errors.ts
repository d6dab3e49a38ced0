/**
 * The error of a start from a definition that cannot be applied as it stands.
 */
import { SubagentError } from '../../lib/errors.ts'

/** A definition that cannot be applied as it stands (its tools name nothing that exists). */
export class AgentDefinitionError extends SubagentError {
  override readonly name = 'AgentDefinitionError'
  constructor(
    readonly definition: string,
    message: string,
  ) {
    super('INVALID_AGENT_DEFINITION', message)
  }
}
