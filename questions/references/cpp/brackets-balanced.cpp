bool bracketsBalanced(string text) {
    string open;
    for (char c : text) {
        if (c == '(' || c == '[' || c == '{') {
            open.push_back(c);
        } else if (c == ')' || c == ']' || c == '}') {
            char wanted = c == ')' ? '(' : c == ']' ? '[' : '{';
            if (open.empty() || open.back() != wanted) return false;
            open.pop_back();
        }
    }
    return open.empty();
}
