function bracketsBalanced(text) {
  const opening = { ")": "(", "]": "[", "}": "{" };
  const stack = [];
  for (const char of text) {
    if (char === "(" || char === "[" || char === "{") {
      stack.push(char);
    } else if (char in opening) {
      if (stack.pop() !== opening[char]) return false;
    }
  }
  return stack.length === 0;
}
