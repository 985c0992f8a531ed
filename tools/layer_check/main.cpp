// The empty program behind cmake/layers.cmake's link check: each tessera_layer_check_<layer> links one
// layer's archive whole, with only the layers below it, so that it links only if no call points up.
int main() { return 0; }
