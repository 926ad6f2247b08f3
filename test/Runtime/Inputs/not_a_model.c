/*===- not_a_model.c - a shared library without mte_model_get_abi ---------===*/

int mte_test_not_a_model(void) { return 0; }
