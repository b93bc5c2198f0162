/**
 * Query depth and alias limits, as a validation rule: deep or alias-heavy
 * documents are refused before any resolver runs, with a stable code.
 */
import { GraphQLError, type ASTVisitor, type ValidationContext } from 'graphql';

export function depthAndAliasLimit(maxDepth: number, maxAliases: number) {
  const rule = (ctx: ValidationContext): ASTVisitor => {
    let depth = 0;
    let aliases = 0;
    return {
      SelectionSet: {
        enter() {
          depth++;
          if (depth === maxDepth + 1) ctx.reportError(new GraphQLError(`query depth is limited to ${maxDepth}`, { extensions: { code: 'invalid_input' } }));
        },
        leave() {
          depth--;
        },
      },
      Field(node) {
        if (node.alias !== undefined && ++aliases === maxAliases + 1) {
          ctx.reportError(new GraphQLError(`a query may use at most ${maxAliases} aliases`, { extensions: { code: 'invalid_input' } }));
        }
      },
    };
  };
  return {
    onValidate({ addValidationRule }: { addValidationRule: (r: (ctx: ValidationContext) => ASTVisitor) => void }) {
      addValidationRule(rule);
    },
  };
}
