string compressRuns(string text) {
    string out;
    size_t start = 0;
    for (size_t index = 1; index <= text.size(); ++index) {
        if (index == text.size() || text[index] != text[start]) {
            size_t length = index - start;
            out += text[start];
            if (length > 1) out += to_string(length);
            start = index;
        }
    }
    return out;
}
