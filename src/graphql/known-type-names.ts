/**
 * graphql-js's KnownTypeNamesRule, made only when a document names a type
 * the schema lacks. The rule lists every type name of the schema when it is
 * made, for the suggestions it gives with an error: at 10,000 tables (some
 * 110,000 types) that list was 35 ms of a 41 ms request, paid by every new
 * document. Here a name the schema has passes at once, and the first one it
 * lacks makes graphql-js's own rule, which reports it as it always has.
 */
import { KnownTypeNamesRule, specifiedRules, type ASTVisitFn, type NamedTypeNode, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

const knownTypeNamesLazily: ValidationRule = (context) => {
  const types = context.getSchema().getTypeMap();
  let rule: ReturnType<ValidationRule> | undefined;
  return {
    NamedType(...args: Parameters<ASTVisitFn<NamedTypeNode>>) {
      if (types[args[0].name.value] !== undefined) return;
      rule ??= KnownTypeNamesRule(context);
      // graphql-js 16's rule visits NamedType with a function.
      const visit = (rule as { NamedType?: ASTVisitFn<NamedTypeNode> }).NamedType;
      if (typeof visit === 'function') visit.apply(rule, args);
    },
  };
};

/** The plugin: documents are validated with the lazy rule in place of graphql-js's own. */
export function knownTypeNamesOnError(): Plugin {
  return {
    onValidate({ validateFn, setValidationFn }) {
      setValidationFn((...args: Parameters<typeof validateFn>) => {
        const [schema, document, rules, ...rest] = args;
        const swapped = (rules ?? specifiedRules).map((r: ValidationRule) => (r === KnownTypeNamesRule ? knownTypeNamesLazily : r));
        return validateFn(schema, document, swapped, ...rest);
      });
    },
  };
}
